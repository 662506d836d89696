export * from './nats.js';
export * from './port.js';
export * from './wait.js';
