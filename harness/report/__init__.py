"""Views of a results file: the HTML compatibility report, JUnit XML and the console summary.
Each reads only the results file (`harness.results`)."""
