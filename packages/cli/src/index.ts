export * from './api-key.js';
export * from './sse-client.js';
export * from './documents.js';
export { DEFAULT_GATEWAY_URL } from './command.js';
export { fabricLayout, fabricServices, writeFabric, type FabricOptions } from './fabric/write-fabric.js';
export { createCertificateAuthority, type CertificateAuthority, type CertificateFiles } from './fabric/certificates.js';
