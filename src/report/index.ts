/** Recording a run: the per-second time series, the stats file, the HTML report and the metrics endpoint. */
export { RunRecorder, type RecorderOptions } from './recorder.js';
export { feedSampler, visitSampler, SequenceSampler, type RunCounts, type RunSample, type RunSampler } from './sample.js';
export type { StatsLine, RunParams, StatsPoint, StepRecord, StepVerdict, SummaryLine, RecordedRun } from './stats-format.js';
export { StatsFileWriter, readStatsFile } from './stats-file.js';
export { mergeRuns, addSummaries } from './merge.js';
export { renderReport } from './html.js';
export { startMetricsServer, type MetricsServer, type MetricsServerOptions } from './metrics-server.js';
export { emptyLatencyHistogram, encodeHistogram, decodeHistogram, latencyDistribution, type LatencyHistogram } from './histogram.js';
