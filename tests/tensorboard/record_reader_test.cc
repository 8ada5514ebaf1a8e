#include "tensorboard/record_reader.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "tensorboard/event_decoder.h"

namespace ty::tensorboard {
namespace {

class RecordReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ty-records-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    path_ = std::string(tmpl) + "/events.out.tfevents.1.host";
  }
  void Write(const std::string& bytes, bool append = false) {
    std::ofstream out(path_, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
    out << bytes;
  }
  RecordScan Scan(uint64_t offset, uint64_t max_bytes = 1 << 20) {
    int fd = open(path_.c_str(), O_RDONLY);
    EXPECT_GE(fd, 0);
    Result<RecordScan> scan = ScanRecords(fd, offset, max_bytes);
    close(fd);
    EXPECT_TRUE(scan.ok()) << scan.status().ToString();
    return scan.ok() ? *scan : RecordScan{};
  }
  std::string path_;
};

TEST_F(RecordReaderTest, MaskedCrcIsTensorFlowsForAKnownRecord) {
  // The 8 length bytes of an empty record: CRC-32C 0x8c28b28a (a bitwise reference
  // implementation's answer), rotated right by 15 and offset, as TFRecord masks it.
  const uint32_t crc = 0x8c28b28aU;
  EXPECT_EQ(MaskedCrc32c(std::string(8, '\0')), ((crc >> 15) | (crc << 17)) + 0xa282ead8U);
}

TEST_F(RecordReaderTest, ReadsWholeRecordsAndSaysWhereToGoOn) {
  Write(FrameRecord("one") + FrameRecord("two"));
  RecordScan scan = Scan(0);
  ASSERT_EQ(scan.records.size(), 2u);
  EXPECT_EQ(scan.records[1], "two");
  EXPECT_EQ(scan.next_offset, 2 * (12 + 3 + 4));
  EXPECT_FALSE(scan.corrupt);
}

TEST_F(RecordReaderTest, AFileStillBeingWrittenStopsBeforeTheHalfRecord) {
  const std::string second = FrameRecord("second record");
  Write(FrameRecord("first") + second.substr(0, 15));
  RecordScan scan = Scan(0);
  ASSERT_EQ(scan.records.size(), 1u);
  const uint64_t after_first = 12 + 5 + 4;
  EXPECT_EQ(scan.next_offset, after_first);
  Write(second.substr(15), /*append=*/true);
  scan = Scan(scan.next_offset);
  ASSERT_EQ(scan.records.size(), 1u);
  EXPECT_EQ(scan.records[0], "second record");
}

TEST_F(RecordReaderTest, ADataCrcErrorSkipsThatRecordOnly) {
  std::string bad = FrameRecord("damaged");
  bad[14] ^= 0x40;  // A data byte.
  Write(FrameRecord("a") + bad + FrameRecord("b"));
  RecordScan scan = Scan(0);
  ASSERT_EQ(scan.records.size(), 2u);
  EXPECT_EQ(scan.records[1], "b");
  EXPECT_EQ(scan.bad_crc, 1u);
  EXPECT_FALSE(scan.corrupt);
}

TEST_F(RecordReaderTest, ALengthCrcErrorEndsTheFileThere) {
  std::string bad = FrameRecord("x");
  bad[0] ^= 0x01;  // The length no longer matches its CRC.
  Write(FrameRecord("a") + bad + FrameRecord("b"));
  RecordScan scan = Scan(0);
  ASSERT_EQ(scan.records.size(), 1u);
  EXPECT_TRUE(scan.corrupt);
  EXPECT_EQ(scan.next_offset, 12u + 1 + 4);
}

TEST_F(RecordReaderTest, AHugeLengthIsDamageNotAnAllocation) {
  std::string header(8, '\xff');
  header[7] = 0x00;  // ~2^56 bytes, with a valid CRC of its own.
  const uint32_t crc = MaskedCrc32c(header);
  for (int i = 0; i < 4; ++i) header.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  Write(header + "xxxx");
  RecordScan scan = Scan(0);
  EXPECT_TRUE(scan.records.empty());
  EXPECT_TRUE(scan.corrupt);
}

TEST_F(RecordReaderTest, APassStopsAtItsByteBudgetAndTheNextGoesOn) {
  std::string all;
  for (int i = 0; i < 100; ++i) all += FrameRecord(std::string(100, 'a' + i % 26));
  Write(all);
  RecordScan first = Scan(0, 1000);
  EXPECT_GE(first.records.size(), 1u);
  EXPECT_LT(first.records.size(), 100u);
  RecordScan rest = Scan(first.next_offset, 1 << 20);
  EXPECT_EQ(first.records.size() + rest.records.size(), 100u);
}

TEST_F(RecordReaderTest, AnEmptyOrTruncatedHeaderReadsNothing) {
  Write("");
  EXPECT_TRUE(Scan(0).records.empty());
  Write(FrameRecord("abc").substr(0, 7));
  RecordScan scan = Scan(0);
  EXPECT_TRUE(scan.records.empty());
  EXPECT_EQ(scan.next_offset, 0u);
  EXPECT_FALSE(scan.corrupt);
}

}  // namespace
}  // namespace ty::tensorboard
