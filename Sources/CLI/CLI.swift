// Commands and argument parsing live here.
