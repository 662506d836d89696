import { createInflateRaw } from 'node:zlib';
import { UnreadableFileError } from './parsed-file.js';

const END_OF_CENTRAL_DIRECTORY = Buffer.from([0x50, 0x4b, 0x05, 0x06]);
const CENTRAL_FILE_HEADER = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;
const SATURATED_16 = 0xffff;
/**
 * More entries than any document has (a DOCX has tens): each is inflated on its own, and 100,000
 * entries of 46 bytes, 4.5 MiB, took 7.5 s to count.
 */
const MAX_ENTRIES = 10_000;
const SATURATED_32 = 0xffffffff;

/**
 * Refuses a zip (a DOCX) whose entries unpack to more than `maxBytes` before anything reads
 * them. mammoth's JSZip would unpack them in memory, mostly outside the heap that the parse
 * worker's heap limit caps, and only learn afterwards that an entry was larger than its header
 * said. The sizes the central directory declares are summed first (an honest zip bomb is refused
 * without unpacking a byte), then every deflated entry is unpacked as a stream and only counted,
 * so a lying header costs at most `maxBytes` of work and no memory. The entries are found as
 * JSZip finds them (the last end-of-central-directory record, the same correction for bytes in
 * front); a file with no such record is left for mammoth to refuse.
 */
export async function checkUnpackedSize(zip: Buffer, maxBytes: number, kind: string): Promise<void> {
  const end = zip.lastIndexOf(END_OF_CENTRAL_DIRECTORY);
  if (end < 0 || end + 22 > zip.length) return;
  const unreadable = (why: string) => new UnreadableFileError(`not a readable ${kind} (${why})`);
  const tooLarge = () =>
    new UnreadableFileError(
      `a ${kind} that unpacks to more than ${mebibytes(maxBytes)} (a zip bomb?): split it into smaller documents`,
    );
  const directorySize = zip.readUInt32LE(end + 12);
  const directoryOffset = zip.readUInt32LE(end + 16);
  // JSZip would read a ZIP64 directory instead, which no document of an upload's size needs.
  const counts = [4, 6, 8, 10].map((field) => zip.readUInt16LE(end + field));
  if (counts.includes(SATURATED_16) || directorySize === SATURATED_32 || directoryOffset === SATURATED_32) {
    throw unreadable('a ZIP64 archive');
  }
  // Bytes in front of the zip (a self-extractor's) shift every offset, as JSZip reads them.
  const base = end - (directoryOffset + directorySize);
  if (base < 0) throw unreadable('its central directory lies past its end');

  const entries: Array<{ method: number; compressedSize: number; dataOffset: number }> = [];
  let declared = 0;
  for (let at = base + directoryOffset; readUInt32(zip, at) === CENTRAL_FILE_HEADER;) {
    if (at + 46 > zip.length) throw unreadable('a central directory entry is cut short');
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const localOffset = zip.readUInt32LE(at + 42);
    if (compressedSize === SATURATED_32 || size === SATURATED_32 || localOffset === SATURATED_32) {
      throw unreadable('a ZIP64 entry');
    }
    if (entries.length >= MAX_ENTRIES) throw unreadable(`more than ${MAX_ENTRIES} entries`);
    declared += size;
    if (declared > maxBytes) throw tooLarge();
    const local = base + localOffset;
    if (readUInt32(zip, local) !== LOCAL_FILE_HEADER || local + 30 > zip.length) {
      throw unreadable('an entry without its local header');
    }
    const dataOffset = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    entries.push({ method, compressedSize, dataOffset });
    at += 46 + zip.readUInt16LE(at + 28) + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }

  let unpacked = 0;
  for (const { method, compressedSize, dataOffset } of entries) {
    const data = zip.subarray(dataOffset, dataOffset + compressedSize);
    // Other methods JSZip cannot unpack either: mammoth refuses them if it needs them.
    if (method === STORED) unpacked += data.length;
    else if (method === DEFLATED) unpacked += await inflatedLength(data, maxBytes - unpacked);
    if (unpacked > maxBytes) throw tooLarge();
  }
}

/** How many bytes `data` inflates to, counted up to one past `limit`; corrupt data counts as far as it inflates. */
async function inflatedLength(data: Buffer, limit: number): Promise<number> {
  const inflate = createInflateRaw({ chunkSize: 1024 * 1024 });
  let length = 0;
  inflate.end(data);
  try {
    for await (const chunk of inflate as AsyncIterable<Buffer>) {
      length += chunk.length;
      if (length > limit) break;
    }
  } catch {
    // Corrupt data is JSZip's to refuse when mammoth reads that entry; what it unpacked is counted.
  } finally {
    inflate.destroy();
  }
  return length;
}

function readUInt32(data: Buffer, offset: number): number | undefined {
  return offset >= 0 && offset + 4 <= data.length ? data.readUInt32LE(offset) : undefined;
}

function mebibytes(bytes: number): string {
  return `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;
}
