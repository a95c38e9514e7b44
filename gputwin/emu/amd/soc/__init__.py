"""The emulated AMD GPU as a PCIe device: what a kernel-less driver (gputwin/drivers/amd/am/) touches
through the BARs. function.py is the PCIe function (config space, VRAM / doorbell / MMIO BARs), regfile.py
the MMIO register file; each IP block (discovery, PSP, SMU, GMC, IH, GFX, SDMA) is its own module that
registers its registers and drives the shared engines of gputwin/emu/amd (command processor, SDMA, shaders)."""
