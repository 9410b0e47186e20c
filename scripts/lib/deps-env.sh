# Sourced by the device scripts: unpacks the carried Debian packages (.deps/*.deb: fmt, RapidCheck &
# co.; the device has no registry) once into .deps/root and puts their libraries on LD_LIBRARY_PATH.
# Run from the checkout's root.
if ls .deps/*.deb >/dev/null 2>&1 && [ ! -d .deps/root ]; then
  mkdir -p .deps/root
  for f in .deps/*.deb; do dpkg -x "$f" .deps/root; done
fi
[ -d .deps/root ] && export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
