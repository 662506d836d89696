import { ValidationError } from '@hopline/contracts';

/**
 * Checks a subject the way the NATS server parses it, so that both adapters refuse the same
 * subjects with the same error instead of the server dropping them: non-empty tokens
 * separated by dots, no whitespace, and wildcards (`*` a whole token, `>` the last token)
 * only where a subscription is meant.
 */
export function assertValidSubject(subject: string, use: 'publish' | 'subscribe'): void {
  if (subject.length === 0 || /\s/.test(subject)) {
    throw new ValidationError(`invalid subject "${subject}": it must be non-empty and contain no whitespace`);
  }
  const tokens = subject.split('.');
  tokens.forEach((token, index) => {
    if (token.length === 0) throw new ValidationError(`invalid subject "${subject}": empty token`);
    const wildcard = token === '*' || token === '>';
    if (wildcard && use === 'publish') {
      throw new ValidationError(`invalid subject "${subject}": wildcards are only allowed when subscribing`);
    }
    if (token === '>' && index !== tokens.length - 1) {
      throw new ValidationError(`invalid subject "${subject}": ">" must be the last token`);
    }
  });
}

/** Whether a literal subject matches a subscription pattern with NATS wildcards. */
export function subjectMatches(pattern: string, subject: string): boolean {
  if (pattern === subject) return true;
  const wanted = pattern.split('.');
  const actual = subject.split('.');
  for (let i = 0; i < wanted.length; i++) {
    const token = wanted[i];
    if (token === '>') return actual.length > i;
    if (i >= actual.length) return false;
    if (token !== '*' && token !== actual[i]) return false;
  }
  return wanted.length === actual.length;
}

/** Whether some subject matches both patterns, as JetStream decides that two streams' subjects overlap. */
export function subjectsOverlap(one: string, other: string): boolean {
  const a = one.split('.');
  const b = other.split('.');
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] === '>' || b[i] === '>') return true;
    if (a[i] !== '*' && b[i] !== '*' && a[i] !== b[i]) return false;
  }
  return a.length === b.length;
}
