//! Render a plan into cmdline, boot loader, TuneD, OpenShift and Kubernetes outputs (pure).
