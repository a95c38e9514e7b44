"""Hardware-in-loop: run fixed conformance programs on a device, record their output bits, replay the
recordings on the emulator and compare bit for bit (docs/hil.md)."""
