/* SPDX-License-Identifier: MIT */
/* The library's version, as it was built. */
#include "kpn_int.h"

const char *kpn_version(void)
{
    return KPN_VERSION_STRING;
}
