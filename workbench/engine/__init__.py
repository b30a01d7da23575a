"""The workbench's pure logic (no Django): reading uploaded documents, running retrieve(-and-rerank) over
two documents, highlighting shared lemmas and comparing two evaluation reports."""
