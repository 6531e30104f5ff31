// The web UI imports uPlot as ./uplot.js (src/api/ui-files.ts serves the
// package's ES module under that name); tsconfig.ui.json's rootDirs finds
// this file for it, so the UI is checked against the package's own types.
import uPlot from 'uplot';
export default uPlot;
