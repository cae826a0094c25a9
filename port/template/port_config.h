/* SPDX-License-Identifier: MIT */
/* The template port's settings: the core includes this when built with -DKPN_PORT_CONFIG='"template/port_config.h"'. */
#ifndef KPN_PORT_TEMPLATE_CONFIG_H
#define KPN_PORT_TEMPLATE_CONFIG_H

/* Measure it on the target (docs/porting.md): guard + the peak of a
 * process that sends and receives + an interrupt's frame, with margin.
 * Until then, the default of kpn.h. */
/* #ifndef KPN_STACK_MIN
#define KPN_STACK_MIN 512u
#endif */

/* Bytes of guard band; with KPN_GUARD_INSIDE 1 they come out of the
 * stack the caller asks for. */
/* #ifndef KPN_STACK_GUARD
#define KPN_STACK_GUARD 32
#endif */

#endif /* KPN_PORT_TEMPLATE_CONFIG_H */
