import { crc32, createDeflateRaw } from 'node:zlib';

interface ZipEntry {
  name: string;
  method: 0 | 8;
  data: Buffer;
  crc: number;
  /** The unpacked size the headers declare. */
  size: number;
}

/**
 * A DOCX of a few hundred KiB whose word/document.xml unpacks to `unpackedBytes` of one repeated
 * paragraph, deflated as it is written (the whole XML is never held). With `honestSizes: false`
 * its headers say the XML unpacks to 1 KiB, as a zip bomb's may to get past a check of them.
 */
export async function zipBombDocx(unpackedBytes: number, { honestSizes = true } = {}): Promise<Buffer> {
  const head = Buffer.from(
    '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>',
  );
  const tail = Buffer.from('</w:body></w:document>');
  const paragraph = '<w:p><w:r><w:t>boom</w:t></w:r></w:p>';
  const paragraphs = Buffer.from(paragraph.repeat(25_000));
  const deflate = createDeflateRaw({ level: 9 });
  const compressed: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => compressed.push(chunk));
  const ended = new Promise((resolve, reject) => deflate.on('end', resolve).on('error', reject));
  let crc = 0;
  let size = 0;
  const write = async (chunk: Buffer) => {
    crc = crc32(chunk, crc);
    size += chunk.length;
    if (!deflate.write(chunk)) await new Promise((resolve) => deflate.once('drain', resolve));
  };
  await write(head);
  while (size + paragraphs.length + tail.length <= unpackedBytes) await write(paragraphs);
  while (size + paragraph.length + tail.length <= unpackedBytes) await write(Buffer.from(paragraph));
  await write(tail);
  deflate.end();
  await ended;
  return zipOf([
    stored(
      '[Content_Types].xml',
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    ),
    stored(
      '_rels/.rels',
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    ),
    { name: 'word/document.xml', method: 8, data: Buffer.concat(compressed), crc, size: honestSizes ? size : 1024 },
  ]);
}

function stored(name: string, text: string): ZipEntry {
  const data = Buffer.from(text);
  return { name, method: 0, data, crc: crc32(data), size: data.length };
}

/** A zip of `entries` as the zip format lays it out: local headers and data, then the central directory. */
function zipOf(entries: ZipEntry[]): Buffer {
  const parts: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(entry.method, 8);
    local.writeUInt16LE(0x21, 12); // 1 January 1980
    local.writeUInt32LE(entry.crc >>> 0, 14);
    local.writeUInt32LE(entry.data.length, 18);
    local.writeUInt32LE(entry.size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(entry.method, 10);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(entry.crc >>> 0, 16);
    central.writeUInt32LE(entry.data.length, 20);
    central.writeUInt32LE(entry.size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    parts.push(local, name, entry.data);
    directory.push(central, name);
    offset += local.length + name.length + entry.data.length;
  }
  const directorySize = directory.reduce((sum, part) => sum + part.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directorySize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, ...directory, end]);
}
