export { startCollector } from './collector.js';
