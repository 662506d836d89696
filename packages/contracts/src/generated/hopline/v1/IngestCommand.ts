// Original file: proto/hopline/v1/retrieval.proto

import type { Document as _hopline_v1_Document, Document__Output as _hopline_v1_Document__Output } from '../../hopline/v1/Document.js';
import type { DocumentRef as _hopline_v1_DocumentRef, DocumentRef__Output as _hopline_v1_DocumentRef__Output } from '../../hopline/v1/DocumentRef.js';

export interface IngestCommand {
  'upsert'?: (_hopline_v1_Document | null);
  'delete'?: (_hopline_v1_DocumentRef | null);
  'op'?: "upsert"|"delete";
}

export interface IngestCommand__Output {
  'upsert'?: (_hopline_v1_Document__Output | null);
  'delete'?: (_hopline_v1_DocumentRef__Output | null);
  'op'?: "upsert"|"delete";
}
