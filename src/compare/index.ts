/** Comparing two corpora (clusters or exports) by meaning: the library half of `vespa-bulk compare`. */
export { compare, type CompareSummary, type CompareSideSummary, type TypeComparison } from './compare.js';
export {
  defaultComparePartitions,
  checkCompareOptions,
  type CompareOptions,
  type CompareSide,
  type CompareClusterSide,
  type CompareExportSide,
  type CompareProgress,
} from './options.js';
