export { documentIdFrom, safeDocumentId } from './document-id.js';
export { DEFAULT_PARSE_LIMITS, type ParseLimits } from './parse-in-worker.js';
export { DOCUMENT_EXTENSIONS, parseDocument, parseTextDocument, TEXT_EXTENSIONS } from './parse-document.js';
export { UnreadableFileError, type ParsedFile } from './parsed-file.js';
