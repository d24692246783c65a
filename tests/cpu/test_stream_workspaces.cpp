// The Context's per-stream workspaces (runtime/stream_workspaces.h) with fake device calls:
// allocated on a stream's first call, freed only on an explicit release that first waits for
// the stream, never while the stream is being captured, and a warning once past the limit.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "fp8gemm/error.h"
#include "runtime/stream_workspaces.h"

namespace fp8gemm {
namespace {

// Fake device memory: each allocation a distinct host block, every call logged in order.
struct FakeDevice {
  std::vector<std::string> log;
  std::map<void*, size_t> live;
  std::vector<std::vector<char>> blocks;
  bool capturing = false;
  bool sync_fails = false;
  std::vector<size_t> warnings;

  static std::string name(cudaStream_t s) { return "stream" + std::to_string(reinterpret_cast<uintptr_t>(s)); }

  StreamWorkspaces::DeviceCalls calls() {
    StreamWorkspaces::DeviceCalls c;
    c.allocate = [this](size_t bytes, bool zero) {
      blocks.emplace_back(bytes, zero ? 0 : 1);
      void* p = blocks.back().data();
      live[p] = bytes;
      log.push_back("allocate " + std::to_string(bytes));
      return p;
    };
    c.free = [this](void* p) {
      log.push_back("free " + std::to_string(live.at(p)));
      live.erase(p);
    };
    c.synchronize = [this](cudaStream_t s) {
      log.push_back("synchronize " + name(s));
      if (sync_fails) throw Error(ErrorKind::kCuda, "cudaStreamSynchronize: an illegal memory access");
    };
    c.is_capturing = [this](cudaStream_t) { return capturing; };
    c.warn_many = [this](size_t n) { warnings.push_back(n); };
    return c;
  }
};

cudaStream_t stream(uintptr_t i) { return reinterpret_cast<cudaStream_t>(i); }

constexpr size_t kFlags = 4096, kScratch = 32 << 20;

TEST(StreamWorkspaces, AllocatedOnAStreamsFirstCallOnly) {
  FakeDevice dev;
  StreamWorkspaces ws(dev.calls(), kFlags, 64);
  const Workspace flags_only = ws.get(stream(1), 0);
  EXPECT_EQ(flags_only.ptr, nullptr);
  EXPECT_EQ(flags_only.flag_count, kFlags);
  const Workspace w = ws.get(stream(1), kScratch);
  const Workspace again = ws.get(stream(1), kScratch);
  EXPECT_EQ(w.ptr, again.ptr);
  EXPECT_EQ(w.flags, flags_only.flags);
  EXPECT_EQ(w.bytes, kScratch);
  EXPECT_EQ(dev.log, (std::vector<std::string>{"allocate 16384", "allocate " + std::to_string(kScratch)}));
  EXPECT_EQ(dev.blocks.front()[0], 0) << "flags start zeroed";
  ws.get(stream(2), kScratch);
  EXPECT_EQ(ws.size(), 2u);
  EXPECT_EQ(dev.live.size(), 4u);
}

TEST(StreamWorkspaces, ReleaseWaitsForTheStreamThenFreesItsMemory) {
  FakeDevice dev;
  StreamWorkspaces ws(dev.calls(), kFlags, 64);
  ws.get(stream(1), kScratch);
  ws.get(stream(2), kScratch);
  dev.log.clear();
  EXPECT_TRUE(ws.release(stream(1)));
  EXPECT_EQ(dev.log, (std::vector<std::string>{"synchronize stream1", "free " + std::to_string(kScratch),
                                               "free 16384"}));
  EXPECT_EQ(ws.size(), 1u);
  EXPECT_EQ(dev.live.size(), 2u) << "stream 2's workspace stays";
  dev.log.clear();
  EXPECT_FALSE(ws.release(stream(1))) << "nothing left to release";
  EXPECT_TRUE(dev.log.empty()) << "no wait for a stream without a workspace";
  ws.get(stream(1), kScratch);  // a later call allocates again
  EXPECT_EQ(ws.size(), 2u);
}

// A graph being captured on the stream would keep the freed address.
TEST(StreamWorkspaces, ReleaseIsRefusedWhileTheStreamIsBeingCaptured) {
  FakeDevice dev;
  StreamWorkspaces ws(dev.calls(), kFlags, 64);
  ws.get(stream(1), kScratch);
  dev.capturing = true;
  try {
    ws.release(stream(1));
    ADD_FAILURE() << "released inside a capture";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("being captured"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ws.size(), 1u);
  EXPECT_EQ(dev.live.size(), 2u);
}

TEST(StreamWorkspaces, AStreamThatCannotBeWaitedForKeepsItsWorkspace) {
  FakeDevice dev;
  StreamWorkspaces ws(dev.calls(), kFlags, 64);
  const Workspace w = ws.get(stream(1), kScratch);
  dev.sync_fails = true;
  EXPECT_THROW(ws.release(stream(1)), Error);
  EXPECT_EQ(dev.live.size(), 2u) << "freed memory queued work may still use";
  dev.sync_fails = false;
  EXPECT_EQ(ws.get(stream(1), kScratch).ptr, w.ptr);
}

// Nothing is freed automatically (a captured graph may replay with the address); a program that
// creates streams without releasing them hears about it once.
TEST(StreamWorkspaces, WarnsOncePastTheLimitAndEvictsNothing) {
  FakeDevice dev;
  StreamWorkspaces ws(dev.calls(), kFlags, 3);
  for (uintptr_t i = 1; i <= 3; ++i) ws.get(stream(i), kScratch);
  EXPECT_TRUE(dev.warnings.empty());
  ws.get(stream(4), kScratch);
  EXPECT_EQ(dev.warnings, std::vector<size_t>{4});
  for (uintptr_t i = 5; i <= 8; ++i) ws.get(stream(i), kScratch);
  EXPECT_EQ(dev.warnings.size(), 1u);
  EXPECT_EQ(ws.size(), 8u);
  EXPECT_EQ(dev.live.size(), 16u);
}

TEST(StreamWorkspaces, EveryWorkspaceIsFreedWithItsOwner) {
  FakeDevice dev;
  {
    StreamWorkspaces ws(dev.calls(), kFlags, 64);
    ws.get(stream(1), kScratch);
    ws.get(stream(2), 0);
  }
  EXPECT_TRUE(dev.live.empty());
}

}  // namespace
}  // namespace fp8gemm
