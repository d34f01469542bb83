#pragma once

#include <cstddef>
#include <vector>

#include "common/result.h"
#include "invocation/lifecycle_store.h"
#include "redis/reply.h"

namespace relay::invocation {

// The replies of the lifecycle scripts (lifecycle_scripts.h documents each one) as the
// LifecycleStore verdicts; a reply of another shape is an internal "lifecycle script" error.

Result<StartVerdict> decodeStart(const redis::ReplyView& reply);
Result<CompleteVerdict> decodeComplete(const redis::ReplyView& reply);
Result<DlqVerdict> decodeDlq(const redis::ReplyView& reply);
/// The *acknowledge* reply for `count` messages: one verdict each, in order (each the reply's
/// error when the call failed).
std::vector<Result<AckVerdict>> decodeAcks(const redis::Result<redis::Reply>& reply,
                                           std::size_t count);
Result<ReleaseVerdict> decodeRelease(const redis::ReplyView& reply);
Result<CancelVerdict> decodeCancel(const redis::ReplyView& reply);
Result<RenewVerdict> decodeRenew(const redis::ReplyView& reply);
Result<BeginVerdict> decodeBegin(const redis::ReplyView& reply);

}  // namespace relay::invocation
