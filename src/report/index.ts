/** Recording a run: the per-second time series, the stats file, the HTML report and the metrics endpoint. */
export { RunRecorder, type RecorderOptions } from './recorder.js';
export { feedSampler, visitSampler, type RunCounts, type RunSample, type RunSampler } from './sample.js';
export type {
  StatsLine,
  RunParams,
  StatsPoint,
  StepRecord,
  StepVerdict,
  SummaryLine,
  RecordedRun,
} from './stats-format.js';
export { StatsFileWriter, readStatsFile } from './stats-file.js';
export { mergeRuns } from './merge.js';
export { renderReport } from './html.js';
export { startMetricsServer, type MetricsServer, type MetricsServerOptions } from './metrics-server.js';
export type { LatencyHistogram } from './histogram.js';
