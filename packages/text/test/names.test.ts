import { describe, expect, it } from 'vitest';
import { chunkEntities } from '../src/index.js';

describe('names', () => {
  it("names - a chunk's entities are its title and the names it states, keyed as the reasoner compares names", () => {
    expect(chunkEntities('The Saturdays', 'Frankie Sandford joined "Girls Aloud" in London.')).toEqual(
      expect.arrayContaining(['saturday', 'frankie sandford', 'girl aloud', 'london']),
    );
    expect(chunkEntities('', '负责人是李明，隶属于数据平台部。')).toEqual(
      expect.arrayContaining(['李明', '数据 平台 部']),
    );
    expect(chunkEntities('', 'nothing here is named.')).toEqual([]);
  });
});
