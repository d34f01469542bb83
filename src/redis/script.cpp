#include "redis/script.h"

#include <utility>

#include "redis/sha1.h"

namespace relay::redis {

Script::Script(std::string source) : source_(std::move(source)), sha1_(sha1Hex(source_)) {}

}  // namespace relay::redis
