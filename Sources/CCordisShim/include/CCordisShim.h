#ifndef CCORDIS_SHIM_H
#define CCORDIS_SHIM_H
int ccordis_shim_version(void);
#endif
