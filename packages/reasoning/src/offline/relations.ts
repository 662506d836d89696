import { contentTerms, memoizeByText, sameStem } from '@hopline/text';

/**
 * How text says a relation a question asks about: the question asks for a "husband", the
 * evidence says "married"; it asks for the "director", the evidence says "directed by"; it asks
 * "属于", the evidence says "隶属于". General vocabulary, not tied to any corpus.
 */
const RELATION_WORDS: Readonly<Record<string, readonly string[]>> = {
  husband: ['married', 'wife', 'spouse'],
  wife: ['married', 'husband', 'spouse'],
  spouse: ['married', 'wife', 'husband'],
  married: ['wife', 'husband', 'spouse'],
  father: ['son', 'daughter', 'child', 'father'],
  mother: ['son', 'daughter', 'child', 'mother'],
  grandfather: ['son', 'daughter', 'father'],
  grandmother: ['son', 'daughter', 'mother'],
  paternal: ['father', 'son', 'daughter'],
  maternal: ['mother', 'son', 'daughter'],
  child: ['son', 'daughter'],
  children: ['son', 'daughter'],
  son: ['father', 'mother'],
  daughter: ['father', 'mother'],
  sibling: ['brother', 'sister'],
  director: ['directed'],
  composer: ['composed', 'music'],
  performer: ['performed', 'singer', 'band', 'artist', 'by'],
  singer: ['sung', 'sang', 'vocal'],
  author: ['written', 'wrote', 'novel'],
  writer: ['written', 'wrote'],
  producer: ['produced'],
  star: ['starring', 'stars'],
  actor: ['starring', 'stars', 'role'],
  actress: ['starring', 'stars', 'role'],
  born: ['birth'],
  birth: ['born'],
  birthplace: ['born'],
  died: ['death'],
  death: ['died'],
  founded: ['founder', 'established'],
  founder: ['founded'],
  owner: ['owned'],
  publisher: ['published'],
  label: ['records'],
  team: ['club', 'played'],
  member: ['band', 'joined'],
  headquarters: ['headquartered', 'based'],
  located: ['location', 'situated', 'lies'],
  负责人: ['负责', '主管', '领导', '牵头'],
  创始人: ['创立', '创办', '创建'],
  成立: ['创立', '创办', '创建', '建立'],
  属于: ['隶属', '隶属于', '归属'],
  出生: ['生于', '出生于'],
};

/**
 * Nouns that name a role another entity fills: a question that asks about "the director of X"
 * must find the director first, then ask about them — a bridge. Category words ("film", "band",
 * "city") are not roles: in "which band formed first" they describe the things compared.
 */
export const ROLE_NOUNS: readonly string[] = [
  'director',
  'author',
  'writer',
  'composer',
  'performer',
  'singer',
  'producer',
  'creator',
  'founder',
  'owner',
  'father',
  'mother',
  'husband',
  'wife',
  'spouse',
  'son',
  'daughter',
  'child',
  'grandfather',
  'grandmother',
  'brother',
  'sister',
  'star',
  'actor',
  'actress',
  'coach',
  'manager',
  'captain',
  'publisher',
  'manufacturer',
  'developer',
  'designer',
  'architect',
  'president',
  'leader',
  'chairman',
  'ceo',
  'host',
  'member',
  'winner',
  'label',
  'headquarters',
  'birthplace',
];

const RELATIONS = Object.entries(RELATION_WORDS);

/**
 * The words evidence uses for a relation term, in RELATION_WORDS' order: remembered per term,
 * since every hop expands the same few terms of its question against every relation.
 */
const relatedWords = memoizeByText((term: string): readonly string[] =>
  RELATIONS.filter(([word]) => sameStem(word, term)).flatMap(([, related]) => related),
);

/** The terms plus the words evidence uses to express the same relations. */
export function expandRelations(terms: readonly string[]): string[] {
  const expanded = new Set(terms);
  for (const term of terms) for (const relatedWord of relatedWords(term)) expanded.add(relatedWord);
  return [...expanded];
}

export function isRoleNoun(term: string): boolean {
  // Exact: a prefix match would make "started" a "star".
  return ROLE_NOUNS.includes(term);
}

// "the composer born earlier", "whose architect is older" — a role with a determiner, not "more members"
const DETERMINED_ROLE = /\b(?:the|whose|their|its|his|her)\s+([\w-]+)(?:\s+([\w-]+))?/gi;

/**
 * The role noun a determiner ties to what the question is about ("the painter who is younger",
 * "whose architect"), if any: the question asks about role-holders, not the things it names. A
 * role noun that names the kind of those things ("which poet died first") has none.
 */
export function determinedRoleNoun(question: string): string | undefined {
  return roleNounIn(DETERMINED_ROLE, question);
}

/** The first role noun among the words a global pattern's groups capture in a question, if any. */
export function roleNounIn(pattern: RegExp, question: string): string | undefined {
  // `matchAll` starts where the shared pattern's lastIndex stands.
  pattern.lastIndex = 0;
  for (const match of question.matchAll(pattern)) {
    for (const word of match.slice(1)) {
      const noun = word && contentTerms(word)[0];
      if (noun && isRoleNoun(noun)) return noun;
    }
  }
  return undefined;
}
