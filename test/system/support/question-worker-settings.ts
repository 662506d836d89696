/** What the killed worker process and the surviving in-process one share. */
export const QUESTION_WORKER = {
  capacity: 32,
  // The hop-reasoner's default QUESTION_LEASE_MS.
  leaseMs: 3_000,
  // About two seconds per question.
  reasoner: { tokens: 20, intervalMs: 100 },
} as const;
