# Installed later by the packaging work (see issue notes).
