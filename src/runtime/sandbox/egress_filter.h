#pragma once

#include "common/result.h"
#include "runtime/egress_policy.h"

namespace relay::runtime {

/// Installs `policy` as an nftables table (`inet relay`, one chain on the output hook) in the
/// calling thread's network namespace, through netlink: no `nft` binary, nothing but the
/// kernel (nf_tables). Needs CAP_NET_ADMIN over that namespace, which relay-launcher has
/// between pasta and bwrap (docs/runtimes.md "network: true"); the handler, in bwrap's nested
/// user namespace without capabilities, cannot change it. In order: the namespace's loopback
/// and IPv6 neighbour discovery pass, `denied` blocks are rejected, then with `allow_list`
/// what `allowed` names passes and everything else is rejected. A rejected packet fails the
/// sender at once instead of timing out: TCP with a reset (ECONNREFUSED on connect), the rest
/// with ICMP administratively prohibited (EPERM on a UDP send). Blocks on the netlink round trip;
/// kUnavailable with the kernel's reason when it refuses (a kernel without nf_tables).
Status installEgressFilter(const EgressPolicy& policy);

}  // namespace relay::runtime
