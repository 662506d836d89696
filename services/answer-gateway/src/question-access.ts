/**
 * A tenant's user and kbs: for a reader, an API key's and the kbs it may read; for a question's
 * owner, the asker's and the kbs it read, as its run, its log's headers or its trace name them.
 */
export interface QuestionReader {
  tenantId: string;
  userId: string;
  kbIds: readonly string[];
}

/**
 * Whether a key may read a question (its events, its trace) or cancel it: the key's user asked
 * it, and the key may read every kb the question read. A user's narrower key (one handed to an
 * app, or the key that replaced one whose kbs were cut) does not reach the questions the wider
 * one asked, nor their citations. A question that names no kb (stored before its events carried
 * them) is no one's to read.
 */
export function mayRead(reader: QuestionReader, owner: QuestionReader): boolean {
  return (
    owner.tenantId === reader.tenantId &&
    owner.userId === reader.userId &&
    owner.kbIds.length > 0 &&
    owner.kbIds.every((kbId) => reader.kbIds.includes(kbId))
  );
}
