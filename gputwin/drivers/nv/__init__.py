"""The NVIDIA driver over RM (/dev/nvidiactl, /dev/nvidiaN) and UVM (/dev/nvidia-uvm); see docs/driver-nv.md."""
