#ifndef CORDIS_CSYSTEMD_SHIM_H
#define CORDIS_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#endif
