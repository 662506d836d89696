// The one set of conversion options shared by the gRPC loader, the NATS codecs and the
// type generator, so a message decodes to the same shape on every transport.
export const PROTO_LOADER_OPTIONS = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
} as const;
