import { describe, expect, it } from 'vitest';
import { BlobWriter, readBlob } from '../src/storage/snapshot-blobs.js';

describe('snapshot blobs', () => {
  const vectors = [new Float32Array([0.5, -1, 2]), new Float32Array([3, 4.25, -5])];

  it('reads aligned arrays as views over the file, without a copy each', () => {
    const writer = new BlobWriter();
    const refs = vectors.map((vector) => writer.add(vector));
    const file = writer.bytes();
    const read = refs.map((ref) => readBlob(file, ref, Float32Array));
    expect(read).toEqual(vectors);
    for (const array of read) expect(array.buffer).toBe(file.buffer);
  });

  it('copies an array whose bytes are not aligned for its type, with the same values', () => {
    const writer = new BlobWriter();
    writer.add(new Uint8Array([7]));
    const ref = writer.add(new Uint32Array([1, 2_000_000_000]));
    // The writer aligns each blob within the file; a file read into a buffer at an odd offset
    // (as a Buffer from a pool may be) puts the same blob off its alignment.
    const written = writer.bytes();
    const file = Buffer.from(new ArrayBuffer(written.byteLength + 1), 1, written.byteLength);
    written.copy(file);
    const read = readBlob(file, ref, Uint32Array);
    expect(read).toEqual(new Uint32Array([1, 2_000_000_000]));
    expect(read.buffer).not.toBe(file.buffer);
  });

  it('keeps each blob to its own bytes: writing one array leaves its neighbours as they were', () => {
    const writer = new BlobWriter();
    const refs = vectors.map((vector) => writer.add(vector));
    const file = writer.bytes();
    const [first, second] = refs.map((ref) => readBlob(file, ref, Float32Array));
    first?.fill(9);
    expect(second).toEqual(vectors[1]);
  });

  it('refuses a blob that runs past the end of the file', () => {
    const file = Buffer.alloc(8);
    expect(() => readBlob(file, [4, 8], Float32Array)).toThrow(/does not fit the file \(8 bytes\)/);
  });
});
