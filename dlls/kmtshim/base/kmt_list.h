/*
 * Intrusive doubly linked lists, the kind every kernel has.
 */
#ifndef KMTSHIM_BASE_LIST_H
#define KMTSHIM_BASE_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct list {
    struct list *next, *prev;
};

#define LIST_INIT(name) { &(name), &(name) }

static inline void list_init(struct list *l) { l->next = l->prev = l; }
static inline bool list_empty(const struct list *l) { return l->next == l; }

static inline void list_add_tail(struct list *head, struct list *e)
{
    e->prev = head->prev;
    e->next = head;
    head->prev->next = e;
    head->prev = e;
}

static inline void list_remove(struct list *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->next = e->prev = e;
}

static inline unsigned list_count(const struct list *l)
{
    unsigned n = 0;
    for (const struct list *e = l->next; e != l; e = e->next)
        n++;
    return n;
}

#define LIST_ENTRY(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

#define LIST_FOR_EACH_ENTRY(it, head, type, member)                          \
    for ((it) = LIST_ENTRY((head)->next, type, member);                      \
         &(it)->member != (head);                                            \
         (it) = LIST_ENTRY((it)->member.next, type, member))

#define LIST_FOR_EACH_ENTRY_SAFE(it, nx, head, type, member)                 \
    for ((it) = LIST_ENTRY((head)->next, type, member),                      \
         (nx) = LIST_ENTRY((it)->member.next, type, member);                 \
         &(it)->member != (head);                                            \
         (it) = (nx), (nx) = LIST_ENTRY((it)->member.next, type, member))

#endif /* KMTSHIM_BASE_LIST_H */
