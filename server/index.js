export { startCollector } from './collector.js';
export { ListenError } from './collector.js';
