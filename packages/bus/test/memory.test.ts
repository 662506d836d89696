import { createMemoryBroker } from '../src/index.js';
import { busScenarios } from './scenarios.js';

const broker = createMemoryBroker();
busScenarios('memory', async ({ onError }) => broker.connect({ onError }));
