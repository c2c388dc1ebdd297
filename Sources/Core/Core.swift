// Domain types, JSON, the Open-Meteo decoder and CSV live here.
