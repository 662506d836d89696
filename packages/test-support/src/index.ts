export * from './nats.js';
export * from './nats-cluster.js';
export * from './port.js';
export * from './wait.js';
export * from './scripted-openai-server.js';
export * from './document-files.js';
export * from './zip-bomb.js';
export * from './stalling-proxy.js';
