"""Tests that drive the real kubectl binary against the local control plane."""
