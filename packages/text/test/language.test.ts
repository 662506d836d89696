import { describe, expect, it } from 'vitest';
import { writtenInChinese } from '../src/index.js';

describe('language', () => {
  it('language - a text is Chinese by its frame words, whatever script the names it holds are in', () => {
    expect(writtenInChinese('天穹项目的负责人是谁？')).toBe(true);
    expect(writtenInChinese('天穹项目和Project Atlas哪个先启动？')).toBe(true);
    expect(writtenInChinese('iPhone 15是哪年发布的？')).toBe(true);
    expect(writtenInChinese('天穹项目')).toBe(true);
    expect(writtenInChinese('Who leads 天穹项目?')).toBe(false);
    expect(writtenInChinese('Is 李明 in 数据平台部?')).toBe(false);
    expect(writtenInChinese('Which company does Mira Chen work for?')).toBe(false);
    expect(writtenInChinese('Mira Chen met 李明 at the office of Northwind Labs in Oslo.')).toBe(false);
  });
});
