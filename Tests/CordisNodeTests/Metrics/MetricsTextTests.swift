import Testing
@testable import CordisNode

/// The Prometheus text the endpoint writes: escaping, numbers, cumulative histograms.
@Suite("Metrics: the text exposition")
struct MetricsTextTests {
    @Test("label values and help texts are escaped; numbers are written as the format reads them")
    func escaping() {
        var text = MetricsText()
        text.family("cordis_x", "gauge", "a \\ b\nc")
        text.sample("cordis_x", [("a", "q\"u\\o\nte")], 1.5)
        text.sample("cordis_x", [], 3)
        #expect(text.text == "# HELP cordis_x a \\\\ b\\nc\n# TYPE cordis_x gauge\ncordis_x{a=\"q\\\"u\\\\o\\nte\"} 1.5\ncordis_x 3\n")
        #expect(MetricsText.format(.infinity) == "+Inf")
        #expect(MetricsText.format(-.infinity) == "-Inf")
        #expect(MetricsText.format(.nan) == "NaN")
        #expect(MetricsText.format(0.0005) == "0.0005")
    }

    @Test("a histogram's buckets are cumulative, +Inf last and equal to the count")
    func histogram() {
        var histogram = MetricsHistogram(bounds: [0.1, 1])
        for value in [0.0625, 0.5, 0.75, 2, -1, .nan] { histogram.observe(value) }
        var text = MetricsText()
        histogram.write("cordis_d_seconds", [("direction", "made")], into: &text)
        #expect(text.text == """
            cordis_d_seconds_bucket{direction="made",le="0.1"} 3
            cordis_d_seconds_bucket{direction="made",le="1"} 5
            cordis_d_seconds_bucket{direction="made",le="+Inf"} 6
            cordis_d_seconds_sum{direction="made"} 3.3125
            cordis_d_seconds_count{direction="made"} 6

            """)
    }
}
