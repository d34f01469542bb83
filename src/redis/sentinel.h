#pragma once

#include <memory>

#include "redis/endpoint.h"
#include "redis/errors.h"
#include "redis/link.h"

namespace relay::redis {

/// Asks the sentinels of `endpoint`, in order, where its master is (SENTINEL
/// get-master-addr-by-name) and opens a link to the first answer that confirms it is a master
/// (HELLO role). A sentinel that is down, does not know the master group, or names a server
/// that is unreachable or a replica (a failover in progress) is skipped. Fails with kIo listing
/// what each sentinel said. `sentinel_options` log in only on demand; `master_options` carry
/// the endpoint's login and database.
Result<std::unique_ptr<Link>> openSentinelMaster(const Endpoint& endpoint,
                                                 const LinkOptions& sentinel_options,
                                                 const LinkOptions& master_options);

}  // namespace relay::redis
