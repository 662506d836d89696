import { describe, expect, it } from 'vitest';
import {
  contentTerms,
  createTokenizer,
  fold,
  lightStem,
  sameStem,
  singular,
  termSpecificity,
  wholeDateAndArticleTerms,
} from '../src/index.js';

const tokenizer = createTokenizer();

describe('tokenizer', () => {
  it('tokenizer - English is lower-cased, stop words dropped and inflections stemmed', () => {
    expect(tokenizer.tokenize('The Players were playing in the Stadiums')).toEqual(['player', 'play', 'stadium']);
  });

  it('tokenizer - "RFC 7231", "rfc7231" and "rfc-7231" share the joined term', () => {
    const spaced = tokenizer.tokenize('RFC 7231');
    expect(spaced).toEqual(expect.arrayContaining(['rfc', '7231', 'rfc7231']));
    expect(tokenizer.tokenize('rfc7231')).toEqual(expect.arrayContaining(['rfc7231', 'rfc', '7231']));
    expect(tokenizer.tokenize('rfc-7231')).toEqual(expect.arrayContaining(['rfc-7231', 'rfc7231']));
  });

  it('tokenizer - identifiers like top_p stay whole and also split', () => {
    expect(tokenizer.tokenize('set top_p to 0.9')).toEqual(expect.arrayContaining(['top_p', 'top', '0.9']));
  });

  it('tokenizer - a stop word before a number is not joined to it', () => {
    expect(tokenizer.tokenize('in 1999')).toEqual(['1999']);
  });

  it('tokenizer - Chinese is segmented by jieba and "第十二条" stays one term', () => {
    const tokens = tokenizer.tokenize('根据《民法典》第十二条规定');
    expect(tokens).toEqual(expect.arrayContaining(['民法典', '第十二条', '规定']));
    expect(tokens.filter((token) => token === '第十二条')).toHaveLength(1);
    expect(tokens).not.toContain('《');
  });

  it('tokenizer - a numbered article written with digits and spaces is one term', () => {
    expect(tokenizer.tokenize('见第 12 条')).toContain('第12条');
  });

  it('tokenizer - a date in digits is one term for its day and one for its month of the year, however spaced', () => {
    const tokens = tokenizer.tokenize('2023年10月16日，公司发布公告');
    expect(tokens).toEqual(expect.arrayContaining(['10月16日', '2023年10月', '公司']));
    expect(tokenizer.tokenize('10 月 16 号上午')).toContain('10月16日');
    expect(tokenizer.tokenize('２０２２年６月')).toContain('2022年6月');
    // A month alone is too common to be a term of its own; "13月" is no month.
    expect(tokenizer.tokenize('10月中旬')).not.toContain('10月');
    expect(tokenizer.tokenize('13月5日').join(' ')).not.toMatch(/13月/);
  });

  it('tokenizer - the whole date and article terms another analyzer splits are the ones the index adds', () => {
    const text = '2023年10月16日，公司依据第 12 条发布公告';
    expect(wholeDateAndArticleTerms(text)).toEqual(['第12条', '10月16日', '2023年10月']);
    expect(tokenizer.tokenize(text)).toEqual(expect.arrayContaining(wholeDateAndArticleTerms(text)));
    // Without Han there is no date of this form to join: "10月" needs its 月.
    expect(wholeDateAndArticleTerms('released on 16 October 2023')).toEqual([]);
  });

  it('tokenizer - its version names its terms and options', () => {
    expect(tokenizer.version).toBe(createTokenizer().version);
    expect(createTokenizer({ stem: false }).version).not.toBe(tokenizer.version);
  });

  it('tokenizer - Chinese function words are dropped', () => {
    expect(tokenizer.tokenize('北京大学的研究生')).not.toContain('的');
  });

  it('tokenizer - Chinese question words are stop words, as reasoning reads them', () => {
    const tokens = tokenizer.tokenize('他如何加入数据平台部');
    expect(tokens).toEqual(expect.arrayContaining(['加入', '数据']));
    expect(tokens).not.toContain('如何');
    expect(tokens).not.toContain('他');
  });

  it('tokenizer - mixed text keeps both languages', () => {
    const tokens = tokenizer.tokenize('我们使用RFC 7231协议');
    expect(tokens).toEqual(expect.arrayContaining(['我们', 'rfc7231', '协议']));
  });

  it('tokenizer - diacritics and full-width forms fold so plain spellings match', () => {
    expect(tokenizer.tokenize('Mýa')).toEqual(tokenizer.tokenize('Mya'));
    expect(tokenizer.tokenize('ＲＦＣ１２')).toEqual(tokenizer.tokenize('rfc12'));
  });

  it('tokenizer - possessives fold onto the name', () => {
    expect(tokenizer.tokenize("Obama's")).toEqual(['obama']);
  });

  it('tokenizer - options can keep stop words and skip stemming', () => {
    expect(createTokenizer({ stopWords: false, stem: false }).tokenize('the players')).toEqual(['the', 'players']);
  });
});

describe('content terms', () => {
  it('content terms - one term per word, in order: an identifier by its parts, without the index variants', () => {
    expect(contentTerms('The Players of Q-Drive played RFC 7231 in the 1990s')).toEqual([
      'player',
      'q',
      'drive',
      'played',
      'rfc',
      '7231',
      '1990s',
    ]);
  });

  it('content terms - Chinese is segmented in search mode, function words left out', () => {
    const terms = contentTerms('李明隶属于数据平台部吗');
    expect(terms).toEqual(expect.arrayContaining(['李明', '隶属于', '属于', '数据']));
    expect(terms).not.toContain('吗');
  });

  it.each([
    'The cities and churches of Tennis County, between the wars',
    'Who directed the 1936 film starring Mirela Dunstan?',
    "Obama's speeches at the U.S. Senate and the Q-Drive premiere",
    '天穹项目的负责人属于哪个部门？',
  ])('content terms - read the words the index reads: each, stemmed on, is an index term: %s', (text) => {
    const index = new Set(tokenizer.tokenize(text));
    const words = contentTerms(text).filter((term) => term.length > 1);
    expect(words.filter((term) => !index.has(/^[a-z]+$/.test(term) ? lightStem(term) : term))).toEqual([]);
  });
});

describe('lightStem', () => {
  it.each([
    ['universities', 'university'],
    ['classes', 'class'],
    ['running', 'run'],
    ['created', 'creat'],
    ['create', 'creat'],
    ['bus', 'bus'],
    ['is', 'is'],
  ])('lightStem - %s → %s', (word, stem) => {
    expect(lightStem(word)).toBe(stem);
  });
});

describe('singular', () => {
  it.each([
    ['cities', 'city'],
    ['churches', 'church'],
    ['players', 'player'],
    ['tennis', 'tennis'],
    ['class', 'class'],
    ['bus', 'bus'],
  ])('singular - %s → %s', (word, stem) => {
    expect(singular(word)).toBe(stem);
  });

  it('singular - is the light stemmer stopped after its plural step', () => {
    expect(lightStem(singular('universities'))).toBe(lightStem('universities'));
  });
});

describe('sameStem', () => {
  it.each([
    ['star', 'starring', true],
    ['directed', 'director', true],
    ['city', 'city', true],
    ['art', 'artist', false],
    ['director', 'district', false],
  ])('sameStem - %s ~ %s: %s', (a, b, same) => {
    expect(sameStem(a, b)).toBe(same);
  });
});

describe('fold', () => {
  it('fold - lower case without diacritics or width forms', () => {
    expect(fold('Mýa ＲＦＣ')).toBe('mya rfc');
  });

  it('specificity - a common word weighs less than a rare one; a word the table lacks weighs its median', () => {
    expect(termSpecificity('事件')).toBeLessThan(termSpecificity('摔倒'));
    expect(termSpecificity('表示')).toBeLessThan(termSpecificity('揭幕'));
    // Neither a made-up name nor a Latin word is in jieba's table: both weigh the same, the median.
    expect(termSpecificity('澜沧江北岭镇')).toBe(termSpecificity('balmain'));
    expect(termSpecificity('balmain')).toBeGreaterThan(termSpecificity('事件'));
  });
});
