/* System V IPC: a semaphore set (SETALL/GETALL, GETVAL, semop, GETPID,
 * GETNCNT, IPC_STAT, IPC_INFO/SEM_INFO, semtimedop timing out, IPC_RMID), a
 * shared memory segment never attached (IPC_STAT, IPC_SET, IPC_INFO,
 * SHM_INFO, IPC_RMID) and a message queue (msgsnd, IPC_STAT, msgrcv by type,
 * an empty queue's ENOMSG, IPC_INFO/MSG_INFO, IPC_RMID). Kernel-wide counts
 * are printed with "~ ". */
#include "test_util.h"

#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>

union semun {
  int val;
  struct semid_ds *buf;
  unsigned short *array;
  struct seminfo *info;
};

static void semaphores(void) {
  int id = semget(IPC_PRIVATE, 3, IPC_CREAT | 0600);
  check(id >= 0);
  unsigned short values[3] = {4, 0, 7};
  union semun arg;
  arg.array = values;
  check(semctl(id, 0, SETALL, arg) == 0);

  struct sembuf ops[2] = {{0, -1, 0}, {1, 2, 0}};
  check(semop(id, ops, 2) == 0);

  unsigned short got[4] = {0xeeee, 0xeeee, 0xeeee, 0xeeee};
  arg.array = got;
  check(semctl(id, 0, GETALL, arg) == 0);
  struct line l;
  line_init(&l);
  line_str(&l, "sem GETALL:");
  for (int i = 0; i < 4; ++i) {
    line_str(&l, " ");
    line_num(&l, got[i]);
  }
  line_str(&l, "\n");
  line_say(&l);
  check(got[0] == 3 && got[1] == 2 && got[2] == 7 && got[3] == 0xeeee);

  say_num("sem GETVAL 2", semctl(id, 2, GETVAL));
  check(semctl(id, 1, GETPID) == getpid());
  say("sem GETPID: this process\n");
  say_num("sem GETNCNT 0", semctl(id, 0, GETNCNT));

  struct semid_ds ds;
  memset(&ds, 0, sizeof ds);
  arg.buf = &ds;
  check(semctl(id, 0, IPC_STAT, arg) == 0);
  say_num("sem IPC_STAT nsems", (long long)ds.sem_nsems);
  say_hex("sem IPC_STAT mode", ds.sem_perm.mode & 0777);
  check(ds.sem_perm.uid == getuid());

  struct seminfo info;
  memset(&info, 0, sizeof info);
  arg.info = &info;
  check(semctl(id, 0, IPC_INFO, arg) >= 0);
  say_nondet_num("sem IPC_INFO semmsl", info.semmsl);
  check(info.semmsl > 0 && info.semmni > 0);
  memset(&info, 0, sizeof info);
  check(semctl(id, 0, SEM_INFO, arg) >= 0);
  say_nondet_num("sem SEM_INFO semusz", info.semusz);
  check(info.semusz >= 1);

  /* Semaphore 1 holds 2: taking 3 would block, the timeout ends it. */
  struct sembuf take = {1, -3, 0};
  struct timespec timeout = {0, 20 * 1000 * 1000};
  errno = 0;
  check(semtimedop(id, &take, 1, &timeout) == -1 && errno == EAGAIN);
  say("semtimedop: EAGAIN after its timeout\n");
  struct sembuf nowait = {1, -3, IPC_NOWAIT};
  errno = 0;
  check(semop(id, &nowait, 1) == -1 && errno == EAGAIN);
  say("semop IPC_NOWAIT: EAGAIN\n");

  check(semctl(id, 0, IPC_RMID) == 0);
  errno = 0;
  check(semctl(id, 0, GETVAL) == -1 && (errno == EINVAL || errno == EIDRM));
  say("sem IPC_RMID: gone\n");
}

static void shared_memory(void) {
  int id = shmget(IPC_PRIVATE, 8192, IPC_CREAT | 0600);
  check(id >= 0);
  struct shmid_ds ds;
  memset(&ds, 0, sizeof ds);
  check(shmctl(id, IPC_STAT, &ds) == 0);
  say_num("shm IPC_STAT segsz", (long long)ds.shm_segsz);
  say_num("shm IPC_STAT nattch", (long long)ds.shm_nattch);
  check(ds.shm_cpid == getpid());
  say("shm IPC_STAT cpid: this process\n");
  ds.shm_perm.mode = 0640;
  check(shmctl(id, IPC_SET, &ds) == 0);
  memset(&ds, 0, sizeof ds);
  check(shmctl(id, IPC_STAT, &ds) == 0);
  say_hex("shm after IPC_SET mode", ds.shm_perm.mode & 0777);

  struct shminfo info;
  memset(&info, 0, sizeof info);
  check(shmctl(id, IPC_INFO, (struct shmid_ds *)&info) >= 0);
  say_nondet_num("shm IPC_INFO shmmni", (long long)info.shmmni);
  check(info.shmmax > 0 && info.shmmni > 0);
  struct shm_info usage;
  memset(&usage, 0, sizeof usage);
  check(shmctl(id, SHM_INFO, (struct shmid_ds *)&usage) >= 0);
  say_nondet_num("shm SHM_INFO used_ids", usage.used_ids);
  check(usage.used_ids >= 1);

  check(shmctl(id, IPC_RMID, NULL) == 0);
  errno = 0;
  check(shmctl(id, IPC_STAT, &ds) == -1 && (errno == EINVAL || errno == EIDRM));
  say("shm IPC_RMID: gone\n");
}

struct message {
  long type;
  char text[32];
};

static void message_queue(void) {
  int id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
  check(id >= 0);
  struct message m = {1, "first"};
  check(msgsnd(id, &m, 6, 0) == 0);
  m.type = 2;
  strcpy(m.text, "second, longer");
  check(msgsnd(id, &m, 15, 0) == 0);

  struct msqid_ds ds;
  memset(&ds, 0, sizeof ds);
  check(msgctl(id, IPC_STAT, &ds) == 0);
  say_num("msg IPC_STAT qnum", (long long)ds.msg_qnum);
  say_num("msg IPC_STAT cbytes", (long long)ds.__msg_cbytes);
  check(ds.msg_lspid == getpid());

  struct message got;
  memset(&got, 0, sizeof got);
  ssize_t n = msgrcv(id, &got, sizeof got.text, 2, 0);
  check(n == 15 && got.type == 2);
  say("msgrcv type 2: ");
  say(got.text);
  say("\n");
  memset(&got, 0, sizeof got);
  n = msgrcv(id, &got, sizeof got.text, 0, 0);
  check(n == 6 && got.type == 1);
  say("msgrcv any: ");
  say(got.text);
  say("\n");
  errno = 0;
  check(msgrcv(id, &got, sizeof got.text, 0, IPC_NOWAIT) == -1 && errno == ENOMSG);
  say("msgrcv empty IPC_NOWAIT: ENOMSG\n");

  struct msginfo info;
  memset(&info, 0, sizeof info);
  check(msgctl(id, IPC_INFO, (struct msqid_ds *)&info) >= 0);
  say_nondet_num("msg IPC_INFO msgmnb", info.msgmnb);
  check(info.msgmax > 0 && info.msgmnb > 0);
  memset(&info, 0, sizeof info);
  check(msgctl(id, MSG_INFO, (struct msqid_ds *)&info) >= 0);
  say_nondet_num("msg MSG_INFO msgpool", info.msgpool);
  check(info.msgpool >= 1);

  check(msgctl(id, IPC_RMID, NULL) == 0);
  errno = 0;
  check(msgsnd(id, &m, 1, IPC_NOWAIT) == -1 && (errno == EINVAL || errno == EIDRM));
  say("msg IPC_RMID: gone\n");
}

int main(void) {
  test_init();
  semaphores();
  shared_memory();
  message_queue();
  finish();
  return 0;
}
