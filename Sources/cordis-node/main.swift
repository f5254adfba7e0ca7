print("cordis-node")
