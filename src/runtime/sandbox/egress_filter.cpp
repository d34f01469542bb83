#include "runtime/sandbox/egress_filter.h"

#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "common/unique_fd.h"

namespace relay::runtime {
namespace {

constexpr const char* kTable = "relay";
constexpr const char* kChain = "egress";
constexpr std::uint8_t kIcmpv6 = 58;
constexpr std::uint8_t kTcp = 6;
constexpr std::uint8_t kUdp = 17;
// ICMPv6 router solicitation .. redirect: neighbour discovery with pasta's end of the link,
// which link-local destinations would otherwise catch.
constexpr std::uint8_t kFirstNdpType = 133;
constexpr std::uint8_t kLastNdpType = 137;
constexpr std::uint32_t kLoopbackIndex = 1;  // lo in every new network namespace

/// One nfnetlink batch: BEGIN, the messages, END; attributes nested by offset.
class Batch {
 public:
  Batch() { message(NFNL_MSG_BATCH_BEGIN, NLM_F_REQUEST, AF_UNSPEC, NFNL_SUBSYS_NFTABLES); }

  // A message of the nftables subsystem, acknowledged by the kernel.
  void request(std::uint16_t type, std::uint16_t flags) {
    message(static_cast<std::uint16_t>((NFNL_SUBSYS_NFTABLES << 8) | type),
            static_cast<std::uint16_t>(NLM_F_REQUEST | NLM_F_ACK | flags), NFPROTO_INET, 0);
    ++acks_;
  }
  std::string finish() {
    message(NFNL_MSG_BATCH_END, NLM_F_REQUEST, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
    return bytes_;
  }
  int acks() const { return acks_; }

  void attr(std::uint16_t type, const void* data, std::size_t length) {
    const nlattr header{static_cast<std::uint16_t>(NLA_HDRLEN + length), type};
    append(&header, sizeof header);
    append(data, length);
    pad();
    fix();
  }
  void string(std::uint16_t type, const char* text) { attr(type, text, std::strlen(text) + 1); }
  void u32(std::uint16_t type, std::uint32_t value) {
    const std::uint32_t big = htonl(value);
    attr(type, &big, sizeof big);
  }
  std::size_t open(std::uint16_t type) {
    const std::size_t at = bytes_.size();
    const nlattr header{NLA_HDRLEN, static_cast<std::uint16_t>(type | NLA_F_NESTED)};
    append(&header, sizeof header);
    return at;
  }
  void close(std::size_t at) {
    const auto length = static_cast<std::uint16_t>(bytes_.size() - at);
    std::memcpy(bytes_.data() + at, &length, sizeof length);
    fix();
  }

 private:
  void message(std::uint16_t type, std::uint16_t flags, std::uint8_t family, std::uint16_t res) {
    current_ = bytes_.size();
    const nlmsghdr header{NLMSG_HDRLEN + static_cast<std::uint32_t>(sizeof(nfgenmsg)), type, flags,
                          ++sequence_, 0};
    append(&header, sizeof header);
    const nfgenmsg generic{family, NFNETLINK_V0, htons(res)};
    append(&generic, sizeof generic);
    pad();
    fix();
  }
  void append(const void* data, std::size_t length) {
    bytes_.append(static_cast<const char*>(data), length);
  }
  void pad() { bytes_.resize((bytes_.size() + 3) & ~std::size_t{3}, '\0'); }
  // The current message's length covers everything appended so far.
  void fix() {
    const auto length = static_cast<std::uint32_t>(bytes_.size() - current_);
    std::memcpy(bytes_.data() + current_, &length, sizeof length);
  }

  std::string bytes_;
  std::size_t current_ = 0;
  std::uint32_t sequence_ = 0;
  int acks_ = 0;
};

/// The expressions of one rule, written into `batch` inside NFTA_RULE_EXPRESSIONS.
class Expressions {
 public:
  explicit Expressions(Batch& batch) : batch_(batch) {}

  void meta(std::uint32_t key) {
    expression("meta", [&] {
      batch_.u32(NFTA_META_DREG, NFT_REG_1);
      batch_.u32(NFTA_META_KEY, key);
    });
  }
  void payload(std::uint32_t base, std::uint32_t offset, std::uint32_t length) {
    expression("payload", [&] {
      batch_.u32(NFTA_PAYLOAD_DREG, NFT_REG_1);
      batch_.u32(NFTA_PAYLOAD_BASE, base);
      batch_.u32(NFTA_PAYLOAD_OFFSET, offset);
      batch_.u32(NFTA_PAYLOAD_LEN, length);
    });
  }
  void mask(const std::uint8_t* bits, std::uint32_t length) {
    static constexpr std::uint8_t kZeros[16] = {};
    expression("bitwise", [&] {
      batch_.u32(NFTA_BITWISE_SREG, NFT_REG_1);
      batch_.u32(NFTA_BITWISE_DREG, NFT_REG_1);
      batch_.u32(NFTA_BITWISE_LEN, length);
      data(NFTA_BITWISE_MASK, bits, length);
      data(NFTA_BITWISE_XOR, kZeros, length);
    });
  }
  void compare(std::uint32_t op, const void* value, std::uint32_t length) {
    expression("cmp", [&] {
      batch_.u32(NFTA_CMP_SREG, NFT_REG_1);
      batch_.u32(NFTA_CMP_OP, op);
      data(NFTA_CMP_DATA, value, length);
    });
  }
  void accept() {
    expression("immediate", [&] {
      batch_.u32(NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);
      const std::size_t immediate = batch_.open(NFTA_IMMEDIATE_DATA);
      const std::size_t verdict = batch_.open(NFTA_DATA_VERDICT);
      batch_.u32(NFTA_VERDICT_CODE, NF_ACCEPT);
      batch_.close(verdict);
      batch_.close(immediate);
    });
  }
  void reject() {
    expression("reject", [&] {
      batch_.u32(NFTA_REJECT_TYPE, NFT_REJECT_ICMPX_UNREACH);
      const std::uint8_t code = NFT_REJECT_ICMPX_ADMIN_PROHIBITED;
      batch_.attr(NFTA_REJECT_ICMP_CODE, &code, 1);
    });
  }
  // A TCP reset to the sender: connect() fails at once with ECONNREFUSED, for IPv6 too, where
  // an ICMPv6 error to the namespace's own socket is not delivered.
  void reset() {
    expression("reject", [&] { batch_.u32(NFTA_REJECT_TYPE, NFT_REJECT_TCP_RST); });
  }
  void protocol(std::uint8_t number) {
    meta(NFT_META_L4PROTO);
    compare(NFT_CMP_EQ, &number, 1);
  }

  // Matches the destination block: the family, then the address under its prefix.
  void destination(const Cidr& cidr) {
    const std::uint8_t family = cidr.v6 ? NFPROTO_IPV6 : NFPROTO_IPV4;
    meta(NFT_META_NFPROTO);
    compare(NFT_CMP_EQ, &family, 1);
    if (cidr.prefix == 0) return;
    // The destination address: offset 16 of the IPv4 header, 24 of the IPv6 one.
    const std::uint32_t length = cidr.v6 ? 16 : 4;
    payload(NFT_PAYLOAD_NETWORK_HEADER, cidr.v6 ? 24 : 16, length);
    if (cidr.prefix < static_cast<int>(length * 8)) {
      std::uint8_t bits[16] = {};
      for (int bit = 0; bit < cidr.prefix; ++bit) bits[bit / 8] |= std::uint8_t(0x80u >> (bit % 8));
      mask(bits, length);
    }
    compare(NFT_CMP_EQ, cidr.bytes.data(), length);
  }
  // Matches a TCP or UDP destination port range.
  void ports(std::uint8_t number, const PortRange& range) {
    protocol(number);
    payload(NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2);  // the destination port of TCP and UDP
    const std::uint16_t first = htons(range.first), last = htons(range.last);
    compare(NFT_CMP_GTE, &first, 2);  // big-endian bytes compare as the numbers do
    compare(NFT_CMP_LTE, &last, 2);
  }

 private:
  template <typename Body>
  void expression(const char* name, Body body) {
    const std::size_t element = batch_.open(NFTA_LIST_ELEM);
    batch_.string(NFTA_EXPR_NAME, name);
    const std::size_t data = batch_.open(NFTA_EXPR_DATA);
    body();
    batch_.close(data);
    batch_.close(element);
  }
  void data(std::uint16_t type, const void* value, std::uint32_t length) {
    const std::size_t nested = batch_.open(type);
    batch_.attr(NFTA_DATA_VALUE, value, length);
    batch_.close(nested);
  }

  Batch& batch_;
};

// Appends the rules that refuse what `match` selects: TCP with a reset, the rest with ICMP
// administratively prohibited.
template <typename Match>
void refuse(Batch& batch, Match match);

// Appends one rule to the chain; `body` writes its expressions.
template <typename Body>
void rule(Batch& batch, Body body) {
  batch.request(NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND);
  batch.string(NFTA_RULE_TABLE, kTable);
  batch.string(NFTA_RULE_CHAIN, kChain);
  const std::size_t list = batch.open(NFTA_RULE_EXPRESSIONS);
  Expressions expressions(batch);
  body(expressions);
  batch.close(list);
}

template <typename Match>
void refuse(Batch& batch, Match match) {
  rule(batch, [&](Expressions& e) {
    match(e);
    e.protocol(kTcp);
    e.reset();
  });
  rule(batch, [&](Expressions& e) {
    match(e);
    e.reject();
  });
}

std::string netlinkError(const char* what, int error) {
  return std::string(what) + ": " + std::strerror(error);
}

// Sends the batch and reads one acknowledgement per request; the first refusal wins.
Status exchange(const std::string& batch, int acks) {
  const UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER));
  if (!fd.valid()) return Error::unavailable(netlinkError("netlink socket", errno));
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd.get(), batch.data(), batch.size(), 0, reinterpret_cast<sockaddr*>(&kernel),
               sizeof kernel) != static_cast<ssize_t>(batch.size())) {
    return Error::unavailable(netlinkError("sending the nftables batch", errno));
  }
  alignas(nlmsghdr) char buffer[16384];
  while (acks > 0) {
    const ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error::unavailable(netlinkError("reading the nftables answer", errno));
    auto length = static_cast<unsigned>(n);
    for (auto* header = reinterpret_cast<nlmsghdr*>(buffer); NLMSG_OK(header, length);
         header = NLMSG_NEXT(header, length)) {
      if (header->nlmsg_type != NLMSG_ERROR) continue;
      const auto* answer = static_cast<const nlmsgerr*>(NLMSG_DATA(header));
      if (answer->error != 0) {
        return Error::unavailable(
            netlinkError("the kernel refused the egress filter (nf_tables)", -answer->error));
      }
      --acks;
    }
  }
  return {};
}

}  // namespace

Status installEgressFilter(const EgressPolicy& policy) {
  Batch batch;
  batch.request(NFT_MSG_NEWTABLE, NLM_F_CREATE);
  batch.string(NFTA_TABLE_NAME, kTable);

  batch.request(NFT_MSG_NEWCHAIN, NLM_F_CREATE);
  batch.string(NFTA_CHAIN_TABLE, kTable);
  batch.string(NFTA_CHAIN_NAME, kChain);
  const std::size_t hook = batch.open(NFTA_CHAIN_HOOK);
  batch.u32(NFTA_HOOK_HOOKNUM, NF_INET_LOCAL_OUT);
  batch.u32(NFTA_HOOK_PRIORITY, 0);
  batch.close(hook);
  batch.u32(NFTA_CHAIN_POLICY, NF_ACCEPT);
  batch.string(NFTA_CHAIN_TYPE, "filter");

  // The namespace's own traffic (its loopback, its own addresses) never leaves it.
  rule(batch, [](Expressions& e) {
    const std::uint32_t loopback = kLoopbackIndex;  // host order, as the kernel stores it
    e.meta(NFT_META_OIF);
    e.compare(NFT_CMP_EQ, &loopback, 4);
    e.accept();
  });
  rule(batch, [](Expressions& e) {
    e.meta(NFT_META_L4PROTO);
    e.compare(NFT_CMP_EQ, &kIcmpv6, 1);
    e.payload(NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1);  // the ICMPv6 type
    e.compare(NFT_CMP_GTE, &kFirstNdpType, 1);
    e.compare(NFT_CMP_LTE, &kLastNdpType, 1);
    e.accept();
  });
  for (const Cidr& cidr : policy.denied) {
    refuse(batch, [&cidr](Expressions& e) { e.destination(cidr); });
  }
  if (policy.allow_list) {
    for (const EgressAllow& allow : policy.allowed) {
      if (allow.ports.empty()) {
        rule(batch, [&allow](Expressions& e) {
          e.destination(allow.to);
          e.accept();
        });
        continue;
      }
      for (const PortRange& range : allow.ports) {
        for (const std::uint8_t protocol : {kTcp, kUdp}) {
          rule(batch, [&](Expressions& e) {
            e.destination(allow.to);
            e.ports(protocol, range);
            e.accept();
          });
        }
      }
    }
    refuse(batch, [](Expressions&) {});
  }
  const int acks = batch.acks();
  return exchange(batch.finish(), acks);
}

}  // namespace relay::runtime
