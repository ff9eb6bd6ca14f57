"""Background driving: the task queue's "drive game N" task (`tasks`), its statements built once (`statements`), the
pooled workers that run it (`pool`; in the server process on the embedded default, `embedded`) and the sweep that
queues again what a dead worker left running (`recovery`). The one game loop they run is `services.play.drive`; kinds and
shells queue a drive through `services.play.drive_queue`, which this package serves (registered in `apps.py`)."""
