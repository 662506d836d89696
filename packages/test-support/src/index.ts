export * from './nats.js';
export * from './port.js';
export * from './wait.js';
export * from './scripted-openai-server.js';
