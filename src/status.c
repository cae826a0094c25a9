/* SPDX-License-Identifier: MIT */
/* Status codes as sentences. */
#include "kpn_int.h"

#if KPN_REPORT
static const char *const messages[KPN_STATUS_COUNT] = {
    "success",                                                   /* KPN_OK */
    "end of stream: the channel is closed and drained",          /* KPN_EOF */
    ("invalid argument: a NULL, a stale handle, or a value out of "
     "range (such as a stack under kpn_stack_min())"),           /* KPN_EINVAL */
    "the arena is too small for this object",                    /* KPN_ENOMEM */
    "not permitted: the caller is not this channel's process",   /* KPN_EPERM */
    "not allowed in the current state",                          /* KPN_ESTATE */
    "the reserve pool cannot hold the channel growth needed",    /* KPN_ERESERVE */
    "a process overflowed its stack",                            /* KPN_ESTACK */
    ("deadlock: a writer waits on a full channel with the resolver off, "
     "or (strict) processes wait to read from each other"),      /* KPN_EDEADLOCK */
    "the system refused a thread, semaphore or idle object",      /* KPN_ETHREAD */
    "the input channel is full: nothing was written",            /* KPN_EFULL */
};

const char *kpn_strerror(kpn_status s)
{
    if ((unsigned)s < (unsigned)KPN_STATUS_COUNT)
        return messages[s];
    return "unknown status";
}
#else /* !KPN_REPORT */

/* Built without the sentences (KPN_REPORT 0): one word for every code. */
const char *kpn_strerror(kpn_status s)
{
    (void)s;
    return "kpn status";
}

#endif /* KPN_REPORT */
