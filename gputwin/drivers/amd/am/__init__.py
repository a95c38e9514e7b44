"""The kernel-less AMD driver ("AM"): boots and drives the GPU through its PCI BARs alone (gputwin/drivers/
pci.py PciDevice), over the ASM2464 USB bridge or an in-process attachment. boot.py runs discovery, PSP and
SMU; the memory, interrupt and queue blocks build on the Mmio and discovery results it returns."""
