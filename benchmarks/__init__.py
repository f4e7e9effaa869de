"""Benchmarks of linsvm against its peers (LIBLINEAR, Snap ML, scikit-learn); see README.md."""
