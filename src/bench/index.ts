/** `bench`: generated load against a cluster, its profiles, and the speedtest source of `feed --speedtest`. */
export { bench, type BenchOptions, type BenchFeedOptions, type BenchResult, type BenchStep } from './bench.js';
export { isHeld, highestHeldRate, parseRates, parseRamp, minAchievedShare, type HeldCriteria, type StepFigures } from './load-profile.js';
export { parseMix, OperationGenerator, schemaDocuments, templateDocuments, type Mix, type DocumentMaker } from './operations.js';
export { speedtestSource } from './speedtest.js';
export { Random } from './random.js';
