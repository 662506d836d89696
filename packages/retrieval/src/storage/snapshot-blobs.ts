/**
 * Typed arrays laid end to end in one binary file, each named in a JSON manifest by where it
 * starts and how many bytes it takes: how the embedded indexes write their arrays to a snapshot
 * without turning them into text.
 */
export type BlobRef = readonly [offset: number, bytes: number];

export class BlobWriter {
  private readonly parts: Buffer[] = [];
  private size = 0;

  add(array: Uint8Array | Uint16Array | Uint32Array | Float32Array): BlobRef {
    // Each array starts at a multiple of its element size, so that a reader can view it in place
    // (readBlob) even where bytes of another length (a chunk's JSON) come before it.
    const padding = (array.BYTES_PER_ELEMENT - (this.size % array.BYTES_PER_ELEMENT)) % array.BYTES_PER_ELEMENT;
    if (padding > 0) {
      this.parts.push(Buffer.alloc(padding));
      this.size += padding;
    }
    const ref: BlobRef = [this.size, array.byteLength];
    this.parts.push(Buffer.from(array.buffer, array.byteOffset, array.byteLength));
    this.size += array.byteLength;
    return ref;
  }

  bytes(): Buffer {
    return Buffer.concat(this.parts, this.size);
  }

  /** The bytes added since the last `take`, for a writer that streams them to a file; offsets keep counting. */
  take(): Buffer {
    const taken = Buffer.concat(this.parts);
    this.parts.length = 0;
    return taken;
  }
}

type ArrayType<T> = {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): T;
  new (buffer: ArrayBuffer): T;
  BYTES_PER_ELEMENT: number;
};

/**
 * The blob as an array over the file's own bytes where they are aligned for its type (every
 * vector of a vector snapshot is), else as an aligned copy. A view costs no allocation of its
 * own, which is most of what a restart spends on 100k vectors copied one by one; the price is
 * that the file's buffer lives as long as any array read from it (at most one snapshot's bytes,
 * until the arrays are replaced). The arrays may be written (bm25 marks postings dead in
 * place): each blob's bytes belong to it alone.
 */
export function readBlob<T>(file: Buffer, [offset, bytes]: BlobRef, Type: ArrayType<T>): T {
  if (offset + bytes > file.byteLength || bytes % Type.BYTES_PER_ELEMENT !== 0)
    throw new Error(`snapshot blob [${offset}, ${bytes}] does not fit the file (${file.byteLength} bytes)`);
  const start = file.byteOffset + offset;
  if (start % Type.BYTES_PER_ELEMENT === 0) return new Type(file.buffer, start, bytes / Type.BYTES_PER_ELEMENT);
  const copy = new ArrayBuffer(bytes);
  new Uint8Array(copy).set(file.subarray(offset, offset + bytes));
  return new Type(copy);
}
