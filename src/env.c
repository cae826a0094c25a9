/* SPDX-License-Identifier: MIT */
/* kpn_config_from_env: runners, policy, channel capacity and CPUs from the process environment. */

#include "kpn_int.h"

/*
 * Only a system with an environment has getenv.  Elsewhere (bare metal)
 * the environment is empty: every variable is unset, so the call checks
 * 'cfg' and changes nothing, and the core still needs no libc beyond
 * memcpy and memset.  KPN_ENV 0 or 1 in the config file overrides.
 */
#ifndef KPN_ENV
#if defined(__unix__) || defined(__APPLE__) || defined(_WIN32)
#define KPN_ENV 1
#else
#define KPN_ENV 0
#endif
#endif

#if KPN_ENV
#include <stdlib.h>
#include <string.h>

/*
 * Reads 'text' as a decimal number of one or more digits and nothing
 * else; 1 and '*out' set if it is one that fits a size_t, else 0.
 * strtoul would take leading blanks and a sign (turning "-1" into
 * ULONG_MAX) and ignore what follows the digits, and its range is
 * unsigned long, not size_t: a setting typed wrong must be refused, not
 * half read.
 */
static int parse_size(const char *text, size_t *out)
{
    size_t value = 0;

    if (*text == '\0')
        return 0;
    for (; *text != '\0'; ++text) {
        size_t digit;

        if (*text < '0' || *text > '9')
            return 0;
        digit = (size_t)(*text - '0');
        if (value > (SIZE_MAX - digit) / 10)
            return 0;
        value = value * 10 + digit;
    }
    *out = value;
    return 1;
}

/*
 * Every variable is read and checked before 'cfg' is written, so that a
 * bad one leaves the whole configuration as it was.  When several are
 * bad, '*bad' names the first in the order KPN_RUNNERS, KPN_POLICY,
 * KPN_CAPACITY, KPN_CPUS.  '*bad' is set to NULL when no variable is to
 * blame (success, or a NULL 'cfg'), so it is never left stale.
 */
kpn_status kpn_config_from_env_check(kpn_config *cfg, const char **bad)
{
    static const char runners_name[] = "KPN_RUNNERS";
    static const char policy_name[] = "KPN_POLICY";
    static const char capacity_name[] = "KPN_CAPACITY";
    static const char cpus_name[] = "KPN_CPUS";
    const char *runners_text, *policy_text, *capacity_text, *cpus_text;
    const char *culprit = NULL;
    size_t runners = 0, capacity = 0, cpus = 0;
    kpn_policy policy = KPN_POLICY_WS;

    if (bad != NULL)
        *bad = NULL;
    if (cfg == NULL)
        return KPN_EINVAL;

    runners_text = getenv(runners_name);
    if (runners_text != NULL &&
        (!parse_size(runners_text, &runners) || runners < 1 ||
         runners > KPN_MAX_RUNNERS))
        culprit = runners_name;

    policy_text = getenv(policy_name);
    if (culprit == NULL && policy_text != NULL) {
        if (strcmp(policy_text, "ws") == 0)
            policy = KPN_POLICY_WS;
        else if (strcmp(policy_text, "static") == 0)
            policy = KPN_POLICY_STATIC;
        else
            culprit = policy_name;
    }

    capacity_text = getenv(capacity_name);
    if (culprit == NULL && capacity_text != NULL &&
        (!parse_size(capacity_text, &capacity) || capacity < 1))
        culprit = capacity_name;

    cpus_text = getenv(cpus_name);
    if (culprit == NULL && cpus_text != NULL &&
        (!parse_size(cpus_text, &cpus) || (size_t)(unsigned)cpus != cpus))
        culprit = cpus_name;

    if (culprit != NULL) {
        if (bad != NULL)
            *bad = culprit;
        return KPN_EINVAL;
    }
    if (runners_text != NULL)
        cfg->runners = (unsigned)runners;
    if (policy_text != NULL)
        cfg->policy = policy;
    if (capacity_text != NULL)
        cfg->default_capacity = capacity;
    if (cpus_text != NULL)
        cfg->cpus = (unsigned)cpus;
    return KPN_OK;
}

#else /* !KPN_ENV */

kpn_status kpn_config_from_env_check(kpn_config *cfg, const char **bad)
{
    if (bad != NULL)
        *bad = NULL;
    return cfg == NULL ? KPN_EINVAL : KPN_OK;
}

#endif /* KPN_ENV */

kpn_status kpn_config_from_env(kpn_config *cfg)
{
    return kpn_config_from_env_check(cfg, NULL);
}
